[("W13 EP8", 64, False, [
   ((32,64,2,None,None),2,True,16,True,True),
   ((64,128,2,None,None),2,True,None,True,True),
   ((64,128,2,None,None),2,True,None,False,False),
   ((64,128,3,None,None),1,True,None,False,False),
   ((32,128,2,None,None),2,True,16,True,True),
   ((32,128,2,None,None),2,True,16,False,False),
   ((32,128,3,None,None),2,True,16,False,True),
 ]),
 ("W13 EP8", 56, False, [
   ((64,128,2,None,None),2,True,None,True,True),
   ((32,128,2,None,None),2,True,16,True,True),
 ]),
 ("W13 EP8", 80, False, [
   ((64,128,2,None,None),2,True,None,True,True),
   ((32,128,2,None,None),2,True,16,True,True),
 ]),
]
