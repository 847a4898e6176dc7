[("W13 EP8", 64, False, [
   ((64,64,3,None,None),1,True,None,True,False,True),
   ((64,64,3,None,None),1,True,None,False,False,True),
   ((64,64,4,None,None),1,True,None,True,False,True),
   ((64,64,2,None,None),2,True,None,True,True,True),
   ((32,64,2,None,None),2,True,16,True,True,True),
   ((32,64,3,None,None),1,True,32,True,False,True),
 ]),
 ("W2 EP8", 64, False, [
   ((64,128,3,None,None),1,True,None,False,False,True),
   ((64,128,3,None,None),1,True,None,True,False,True),
 ]),
 ("W2 EP8, TP attention", 256, False, [
   ((32,128,3,None,None),2,True,None,False,False,True),
   ((32,128,3,None,None),2,True,None,True,False,True),
 ]),
 ("W13 EP8", 128, False, [
   ((64,64,2,None,None),1,True,16,False,False,True),
   ((64,64,3,None,None),1,True,32,False,False,True),
   ((64,64,2,None,None),2,True,16,False,True,True),
 ]),
]
