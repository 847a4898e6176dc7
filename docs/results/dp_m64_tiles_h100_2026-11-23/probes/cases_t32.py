[("W13 EP8", 64, False, [
   ((32,64,2,None,None),2,True,16,True,True),
   ((32,64,3,None,None),1,True,32,True,False),
   ((32,64,3,None,None),1,True,32,False,False),
   ((32,64,2,None,None),1,True,32,True,False),
   ((32,64,4,None,None),1,True,32,True,False),
   ((32,64,2,None,None),2,True,32,True,True),
   ((32,64,2,None,None),2,True,32,True,False),
   ((64,64,3,None,None),1,True,None,False,False),
 ]),
 ("W13 EP8", 56, False, [
   ((32,64,3,None,None),1,True,32,True,False),
   ((32,64,2,None,None),2,True,32,True,True),
 ]),
 ("W13 EP8", 80, False, [
   ((32,64,3,None,None),1,True,32,True,False),
   ((32,64,2,None,None),2,True,32,True,True),
 ]),
]
